// The relay's source adapters (eventSourceSource, webSocketSource) of the built package, with
// stand-in constructors: their options are checked like every other option of the package
// (a TypeError naming it), and the resume point reaches the server's query.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventSourceSource, webSocketSource } from 'tab-baton';

class FakeEventSource {
  static last = null;
  constructor(url, init) {
    Object.assign(this, { url, init, listeners: new Map(), readyState: 1 });
    FakeEventSource.last = this;
  }
  addEventListener(type, fn) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  removeEventListener() {}
  close() {}
  fire(type, event) {
    for (const fn of this.listeners.get(type) ?? []) fn(event);
  }
}
class FakeWebSocket {
  constructor(url, protocols) {
    Object.assign(this, { url, protocols });
  }
  close() {}
}

const naming = (option) => (error) => error instanceof TypeError && error.message.includes(`"${option}"`);
const recorder = () => {
  const events = [];
  const emit = (event) => events.push(event);
  emit.heartbeat = () => events.push('heartbeat');
  emit.fail = () => events.push('fail');
  return { emit, events };
};

test('eventSourceSource: wrong or unknown options throw a TypeError naming them', () => {
  const EventSource = FakeEventSource;
  assert.throws(() => eventSourceSource('/s', { EventSource, types: 'message' }), naming('types'));
  assert.throws(() => eventSourceSource('/s', { EventSource, heartbeatTypes: [5] }), naming('heartbeatTypes'));
  assert.throws(() => eventSourceSource('/s', { EventSource, parse: 'json' }), naming('parse'));
  assert.throws(() => eventSourceSource('/s', { EventSource, withCredentials: 'yes' }), naming('withCredentials'));
  assert.throws(() => eventSourceSource('/s', { EventSource: 5 }), naming('EventSource'));
  assert.throws(() => eventSourceSource('/s', { EventSource, type: ['message'] }), naming('type'));
  assert.throws(() => eventSourceSource('/s', null), naming('options'));
  assert.throws(() => eventSourceSource('/s'), naming('EventSource'), 'Node has no EventSource: the option to pass is named');
});

test('webSocketSource: wrong or unknown options throw a TypeError naming them', () => {
  const WebSocket = FakeWebSocket;
  assert.throws(() => webSocketSource('/s', { WebSocket, parse: 5 }), naming('parse'));
  assert.throws(() => webSocketSource('/s', { WebSocket, subscribe: 5 }), naming('subscribe'));
  assert.throws(() => webSocketSource('/s', { WebSocket, protocols: 5 }), naming('protocols'));
  assert.throws(() => webSocketSource('/s', { WebSocket, protocol: 'x' }), naming('protocol'));
  assert.throws(() => webSocketSource('/s', null), naming('options'));
  const source = webSocketSource('/s', { WebSocket, protocols: ['v1'] });
  source(null, recorder().emit, new AbortController().signal);
});

test('eventSourceSource: the resume point goes in the query, before a fragment; each listed type is relayed', () => {
  const { emit, events } = recorder();
  const signal = new AbortController().signal;
  eventSourceSource('/s?x=1#top', { EventSource: FakeEventSource, types: ['tick', 'tock'] })(41, emit, signal);
  assert.equal(FakeEventSource.last.url, '/s?x=1&after=41#top');
  FakeEventSource.last.fire('tick', { lastEventId: '42', data: 'a' });
  FakeEventSource.last.fire('tock', { lastEventId: '43', data: 'b' });
  assert.deepEqual(events, [{ id: '42', data: 'a', type: 'tick' }, { id: '43', data: 'b', type: 'tock' }]);
  eventSourceSource('/s', { EventSource: FakeEventSource })(null, emit, signal);
  assert.equal(FakeEventSource.last.url, '/s', 'from the head: no parameter');
});

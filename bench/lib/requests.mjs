// Requests to the leader: Baton's `request` beside tab-election's `call`, in the same browser.
// Each library gets `tabs` tabs (each its own window) of its page (bench/pages/talk-*.html):
// one tab that asks and never leads (?candidate=0), and `tabs - 1` candidate leaders with an
// echo service that names the tab that answered.
//   - Round trip: the asking tab asks the leader `roundTrips` times, one request after the
//     other, timed in the page (performance.now around the awaited request); the libraries
//     take turns in `batches` slices so that a change of load hits both alike.
//   - Close: the asking tab asks in a loop; the leader's tab is closed like a user closes it;
//     the time from the close command to the first answer from another tab, and the
//     requests that got no answer within `timeoutMs`. A new tab replaces the closed one
//     before the next trial; trials alternate between the libraries.
import { Pool, nodeNow } from './tabs.mjs';

export const TALK_SUBJECTS = [
  { key: 'baton', page: 'talk-baton', query: {}, label: 'Baton `request`' },
  { key: 'tab-election', page: 'talk-tab-election', query: {}, label: 'tab-election `call`' },
];

let nsSeq = 0;
const uniqueNs = (key) => `talk-${key}-${process.pid}-${Date.now().toString(36)}-${(nsSeq += 1)}`;
const WARM_UP = 20;

async function waitUntil(fn, what, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A library's tabs: the candidates (`pool`) and the asking tab (`asker`, in its own pool). */
class Talkers {
  constructor(bench, subject, tabs) {
    const ns = uniqueNs(subject.key);
    this.pool = new Pool({ bench, subject, ns });
    this.askers = new Pool({ bench, subject: { ...subject, query: { ...subject.query, candidate: '0' } }, ns });
    this.tabs = tabs;
  }

  /** One settled leader among `tabs - 1` candidates: {leader, asker}. */
  async settled() {
    if (!this.asker) this.asker = await this.askers.add();
    await this.pool.fill(this.tabs - 1);
    return { leader: await this.pool.singleLeader(), asker: this.asker };
  }

  async dispose() {
    await this.pool.dispose();
    await this.askers.dispose();
  }
}

/** `n` sequential requests from `asker`; each one's round trip in ms (page clock). */
function askInTurn(asker, n, timeoutMs) {
  return asker.tab.page.evaluate(async ({ n, timeoutMs }) => {
    const times = [];
    for (let i = 0; i < n; i += 1) {
      const t = performance.now();
      await window.__talk.ask(i, timeoutMs);
      times.push(performance.now() - t);
    }
    return times;
  }, { n, timeoutMs });
}

/** One close trial: ms from the close command to the first answer by another tab. */
async function closeTrial(talkers, trial, timeoutMs) {
  const { pool } = talkers;
  const { leader, asker } = await talkers.settled();
  await asker.tab.page.evaluate((timeoutMs) => {
    const run = { answers: [], failures: [], stop: false };
    window.__talkRun = run;
    run.done = (async () => {
      for (let i = 0; !run.stop; i += 1) {
        try {
          const answer = await window.__talk.ask(i, timeoutMs);
          run.answers.push({ at: performance.timeOrigin + performance.now(), by: answer.by });
        } catch (error) {
          run.failures.push(String(error?.code || error?.message || error));
        }
      }
    })();
  }, timeoutMs);
  // The loop runs: a few answers from the leader before it closes.
  await waitUntil(() => asker.tab.page.evaluate(() => window.__talkRun.answers.length >= 3), 'answers before the close', timeoutMs);
  const closedAt = nodeNow();
  await pool.close(leader);
  let first = null;
  try {
    first = await waitUntil(
      () => asker.tab.page.evaluate((id) => window.__talkRun.answers.find((a) => a.by !== id) || null, leader.id),
      'an answer from the next leader',
      timeoutMs * 2,
    );
  } catch {
    // Reported as no answer (null).
  }
  const out = await asker.tab.page.evaluate(async () => {
    const run = window.__talkRun;
    run.stop = true;
    await run.done;
    return { answered: run.answers.length, failures: run.failures };
  });
  return {
    trial,
    firstAnswer: first ? pool.toNode(first.at) - closedAt : null,
    answered: out.answered,
    unanswered: out.failures.length,
    failures: [...new Set(out.failures)].slice(0, 3),
  };
}

export async function requests(bench, { tabs, roundTrips, batches, closeTrials, timeoutMs, log }) {
  const libs = TALK_SUBJECTS.map((subject) => new Talkers(bench, subject, tabs));
  const results = Object.fromEntries(TALK_SUBJECTS.map((s) => [s.key, { roundTrip: [], close: [] }]));
  try {
    // Round trips: one leader and one asker per library, the libraries in turns.
    const askers = [];
    for (const talkers of libs) {
      const { asker } = await talkers.settled();
      await askInTurn(asker, WARM_UP, timeoutMs);
      askers.push(asker);
    }
    const slice = Math.ceil(roundTrips / batches);
    for (let b = 0; b < batches; b += 1) {
      for (let j = 0; j < libs.length; j += 1) {
        const k = (j + b) % libs.length;
        results[TALK_SUBJECTS[k].key].roundTrip.push(...(await askInTurn(askers[k], slice, timeoutMs)));
      }
    }
    log?.(`requests: ${slice * batches} round trips per library done`);
    for (let i = 0; i < closeTrials; i += 1) {
      for (let j = 0; j < libs.length; j += 1) {
        const k = (j + i) % libs.length;
        const key = TALK_SUBJECTS[k].key;
        try {
          results[key].close.push(await closeTrial(libs[k], i, timeoutMs));
        } catch (error) {
          results[key].close.push({ error: error.message });
        }
      }
    }
    log?.(`requests: ${closeTrials} close trials per library done`);
  } finally {
    for (const talkers of libs) await talkers.dispose();
  }
  return results;
}

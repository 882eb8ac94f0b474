// Benchmark instrumentation: a classic script, loaded first by every bench page, before any
// library code runs (it is the page's "init script"). It installs window.__bench:
//   - counters: BroadcastChannel messages posted (prototype.postMessage wrapped) and delivered
//     (a counting listener on every channel object), timer callbacks run (setTimeout and
//     setInterval callbacks wrapped), timers set;
//   - WebAssembly.instantiate / instantiateStreaming / compile timings;
//   - the time of the last Web Lock granted to the page (any name), sent with each leadership
//     event: a hand-over splits into the part until the grant and the library's part after it;
//   - lifecycle timestamps (beforeunload, pagehide, freeze, resume), absolute
//     (performance.timeOrigin + performance.now(), milliseconds since the epoch);
//   - the page entry's hooks: setup({lib, mode, isLeader, epoch, release, diag}), elected(), deposed();
//     diag() returns what the library says about itself (read when a trial gets stuck).
// Leadership changes are also printed as `__bench {"ev":...}` console messages, so the
// runner hears them at once without polling.
// Query: ?locks=off hides navigator.locks (the libraries' fallback modes), ?id=<tab id>,
// ?freeze=silent hides the page lifecycle events from the library, ?trace=1 records a timeline
// of lock grants, storage writes and channel traffic (both below).
(function () {
  'use strict';
  var q = new URLSearchParams(location.search);
  var now = function () { return performance.timeOrigin + performance.now(); };
  var counters = { posted: 0, delivered: 0, timerCallbacks: 0, timersSet: 0, channels: 0 };
  var pageKey = function (what) { return '__bench/' + (q.get('ns') || '') + '/' + bench.id + '/' + what; };
  var api = null;

  if (q.get('locks') === 'off') {
    Object.defineProperty(Navigator.prototype, 'locks', { configurable: true, get: function () { return undefined; } });
  }

  // Lock grants (with Web Locks): the time of the last one is sent with the leadership event,
  // so that a hand-over splits into the browser's part (until the grant) and the library's
  // part after it (for Baton: the epoch's transaction and the elected step).
  if (navigator.locks) {
    var lockRequest = LockManager.prototype.request;
    LockManager.prototype.request = function (name, options, callback) {
      var cb = typeof options === 'function' ? options : callback;
      var granted = function () { bench.grantedAt = now(); return cb.apply(this, arguments); };
      return typeof options === 'function' ? lockRequest.call(this, name, granted) : lockRequest.call(this, name, options, granted);
    };
  }

  var bench = {
    id: q.get('id') || Math.random().toString(36).slice(2, 10),
    lib: null,
    mode: null,
    timeOrigin: performance.timeOrigin,
    instrumentAt: performance.now(), // ms after navigation start
    entryAt: null,          // the page entry's code started (after its imports, incl. Baton's wasm)
    requestedAt: null,      // absolute: leadership requested
    becameLeaderAt: null,   // absolute: the last leadership callback
    grantedAt: null,        // absolute: the last Web Lock granted to this page (any name)
    leaderTimes: [],
    deposedTimes: [],
    beforeunloadAt: null,
    pagehideAt: null,
    freezes: 0,
    freezeAt: null,         // absolute: the last freeze event (the page is frozen from then on)
    resumes: 0,
    wasm: [],               // [{api, startMs, endMs, bytes}] relative to navigation start
    counters: counters,
    errors: [],
    get isLeader() { return api ? Boolean(api.isLeader()) : false; },
    get epoch() { return api && api.epoch ? api.epoch() : null; },
    now: now,
    /** Called by the page entry once the library is set up and has asked to lead. */
    setup: function (a) {
      api = a;
      bench.lib = a.lib;
      bench.mode = a.mode;
      bench.requestedAt = a.requestedAt || now();
      // Released in pagehide where the library allows it (registered after the library's own
      // listeners, so a library that releases itself in pagehide keeps its order).
      addEventListener('pagehide', function () {
        var libDone = now(); // the library's own pagehide listeners (if any) have run
        try { if (a.release) a.release(); } catch (e) { bench.errors.push(String(e)); }
        var released = now();
        try {
          localStorage.setItem(pageKey('pagehide'), String(bench.pagehideAt));
          localStorage.setItem(pageKey('beforeunload'), String(bench.beforeunloadAt));
          localStorage.setItem(pageKey('pagehide-lib-done'), String(libDone));
          localStorage.setItem(pageKey('pagehide-released'), String(released));
        } catch (e) { /* blocked */ }
      });
      log({ ev: 'ready', at: bench.requestedAt });
    },
    elected: function () {
      var at = now();
      bench.becameLeaderAt = at;
      bench.leaderTimes.push(at);
      log({ ev: 'leader', at: at, epoch: bench.epoch, grantedAt: bench.grantedAt });
    },
    deposed: function (reason) {
      var at = now();
      bench.deposedTimes.push(at);
      log({ ev: 'deposed', at: at, reason: reason || null });
    },
    snapshot: function () {
      return {
        id: bench.id, lib: bench.lib, mode: bench.mode, isLeader: bench.isLeader, epoch: bench.epoch,
        timeOrigin: bench.timeOrigin, instrumentAt: bench.instrumentAt, entryAt: bench.entryAt,
        requestedAt: bench.requestedAt, becameLeaderAt: bench.becameLeaderAt, grantedAt: bench.grantedAt, leaderTimes: bench.leaderTimes.slice(),
        deposedTimes: bench.deposedTimes.slice(), freezes: bench.freezes, freezeAt: bench.freezeAt, resumes: bench.resumes,
        wasm: bench.wasm.slice(), counters: Object.assign({}, counters), errors: bench.errors.slice(),
        visibility: document.visibilityState, at: now(), init: bench.init || null,
      };
    },
    /** What the library says about itself (its log, counters), for a trial that got stuck. */
    diag: function () {
      try { return api && api.diag ? api.diag() : null; } catch (e) { return { error: String(e) }; }
    },
  };
  function log(obj) {
    obj.id = bench.id;
    console.log('__bench ' + JSON.stringify(obj));
  }
  window.__bench = bench;

  addEventListener('error', function (e) { bench.errors.push(String(e.message)); });
  addEventListener('unhandledrejection', function (e) { bench.errors.push('unhandled: ' + String(e.reason)); });
  // Capture listeners on window run before every listener a library adds later.
  addEventListener('beforeunload', function () { bench.beforeunloadAt = now(); }, true);
  addEventListener('pagehide', function () { bench.pagehideAt = now(); }, true);
  document.addEventListener('freeze', function () { bench.freezes += 1; bench.freezeAt = now(); }, true);
  document.addEventListener('resume', function () { bench.resumes += 1; }, true);
  // ?freeze=silent: the library never hears of the freeze (freeze, resume, visibilitychange
  // stop here), as with a tab that stalls without notice; only its timers stop.
  if (q.get('freeze') === 'silent') {
    ['freeze', 'resume', 'visibilitychange'].forEach(function (type) {
      document.addEventListener(type, function (e) { e.stopImmediatePropagation(); }, true);
    });
  }

  // Channel messages: posted (any channel object) and delivered (to every channel object).
  var NativeBC = window.BroadcastChannel;
  if (typeof NativeBC === 'function') {
    var post = NativeBC.prototype.postMessage;
    NativeBC.prototype.postMessage = function () {
      counters.posted += 1;
      return post.apply(this, arguments);
    };
    var CountingBroadcastChannel = class BroadcastChannel extends NativeBC {
      constructor(name) {
        super(name);
        counters.channels += 1;
        EventTarget.prototype.addEventListener.call(this, 'message', function (e) { counters.delivered += 1; if (counters.onDeliver) counters.onDeliver(e); });
      }
    };
    window.BroadcastChannel = CountingBroadcastChannel;
  }

  // Timer wake-ups: every setTimeout / setInterval callback run.
  ['setTimeout', 'setInterval'].forEach(function (name) {
    var orig = window[name];
    window[name] = function (fn) {
      counters.timersSet += 1;
      var args = Array.prototype.slice.call(arguments);
      if (typeof fn === 'function') {
        args[0] = function () {
          counters.timerCallbacks += 1;
          if (counters.onTimer) counters.onTimer();
          return fn.apply(this, arguments);
        };
      }
      return orig.apply(window, args);
    };
  });

  // ?trace=1 (diagnostics): a timeline of lock grants, localStorage reads and writes, IndexedDB
  // opens and transactions, channel traffic, timer callbacks and long tasks in bench.trace
  // ([what, absolute time]), to see where a hand-over's or a start-up's time goes.
  if (q.get('trace') === '1') {
    var trace = bench.trace = [];
    var mark = function (what) { if (trace.length < 5000) trace.push([what, now()]); };
    if (navigator.locks) {
      var request = LockManager.prototype.request;
      LockManager.prototype.request = function (name, options, callback) {
        var cb = typeof options === 'function' ? options : callback;
        var wrapped = function (lock) {
          mark('lock-granted ' + (lock ? lock.name : 'null'));
          // How busy the page's event loop is at the grant: a task queued now, marked when it runs.
          var probe = new MessageChannel();
          probe.port1.onmessage = function () { mark('task-probe'); probe.port1.close(); };
          probe.port2.postMessage(0);
          return cb.apply(this, arguments);
        };
        mark('lock-request ' + name + ' ' + JSON.stringify(typeof options === 'function' ? {} : Object.assign({}, options, { signal: undefined })));
        return typeof options === 'function' ? request.call(this, name, wrapped) : request.call(this, name, options, wrapped);
      };
    }
    var setItem = Storage.prototype.setItem;
    Storage.prototype.setItem = function (k) { mark('setItem ' + k); var r = setItem.apply(this, arguments); mark('setItem done'); return r; };
    var getItem = Storage.prototype.getItem;
    Storage.prototype.getItem = function (k) { mark('getItem ' + k); var r = getItem.apply(this, arguments); mark('getItem done'); return r; };
    var idbOpen = IDBFactory.prototype.open;
    IDBFactory.prototype.open = function (name) {
      mark('idb-open ' + name);
      var req = idbOpen.apply(this, arguments);
      req.addEventListener('upgradeneeded', function () { mark('idb-open upgrade'); });
      req.addEventListener('success', function () { mark('idb-open done'); });
      return req;
    };
    var idbTx = IDBDatabase.prototype.transaction;
    IDBDatabase.prototype.transaction = function (stores, mode) {
      mark('idb-tx ' + stores + ' ' + (mode || 'readonly'));
      var tx = idbTx.apply(this, arguments);
      mark('idb-tx made');
      tx.addEventListener('complete', function () { mark('idb-tx complete ' + stores); });
      return tx;
    };
    // Each request and its answer, and an explicit commit: which trip to the store is slow.
    ['get', 'put', 'add', 'openCursor', 'openKeyCursor', 'getKey', 'count'].forEach(function (name) {
      var orig = IDBObjectStore.prototype[name];
      if (typeof orig !== 'function') return;
      IDBObjectStore.prototype[name] = function () {
        var what = name + ' ' + this.name;
        mark('idb-req ' + what);
        var req = orig.apply(this, arguments);
        req.addEventListener('success', function () { mark('idb-req done ' + what); });
        return req;
      };
    });
    var idbCommit = IDBTransaction.prototype.commit;
    if (typeof idbCommit === 'function') IDBTransaction.prototype.commit = function () { mark('idb-commit'); return idbCommit.apply(this, arguments); };
    // A Baton frame (wasm/core/wire.h: magic 0xBA, version, kind, then varints and strings)
    // named by its kind (4 is a goodbye), sender and tick sequence: a tick sequence that rises
    // is what the others take for the sender's progress.
    var frameText = function (data) {
      if (!(data instanceof Uint8Array) || data.length < 3 || data[0] !== 0xBA) return '';
      var i = 3;
      var varint = function () { var n = 0, scale = 1, b; do { b = data[i++]; n += (b & 0x7f) * scale; scale *= 128; } while (b & 0x80 && i < data.length); return n; };
      var string = function () { var n = varint(); var s = String.fromCharCode.apply(null, data.subarray(i, i + n)); i += n; return s; };
      try {
        var sender = string();
        varint(); // generation
        i += 1; // lifecycle
        string(); // app version
        varint(); // start time
        return ' kind ' + data[2] + ' from ' + sender + ' tick ' + varint();
      } catch (e) { return ' kind ' + data[2]; }
    };
    var post2 = NativeBC && NativeBC.prototype.postMessage;
    if (post2) NativeBC.prototype.postMessage = function (data) { mark('post' + frameText(data)); return post2.apply(this, arguments); };
    counters.onDeliver = function (e) { mark('delivered' + frameText(e && e.data)); };
    counters.onTimer = function () { mark('timer'); };
    // Long tasks (50 ms or more): whether the main thread was busy while a grant waited.
    try {
      new PerformanceObserver(function (list) {
        list.getEntries().forEach(function (e) {
          if (trace.length < 5000) trace.push(['long-task start ' + e.duration.toFixed(1) + ' ms', performance.timeOrigin + e.startTime]);
        });
      }).observe({ type: 'longtask', buffered: true });
    } catch (e) { /* no Long Tasks API */ }
  }

  // WebAssembly compile + instantiate timings (Baton's core; the peers have no wasm).
  ['instantiate', 'instantiateStreaming', 'compile'].forEach(function (name) {
    var orig = WebAssembly[name];
    if (typeof orig !== 'function') return;
    WebAssembly[name] = function (source) {
      var entry = { api: name, startMs: performance.now(), endMs: null, bytes: source && source.byteLength };
      bench.wasm.push(entry);
      var p = orig.apply(WebAssembly, arguments);
      p.then(function () { entry.endMs = performance.now(); }, function (e) { entry.error = String(e); });
      return p;
    };
  });
})();

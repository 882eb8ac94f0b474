/**
 * In-memory `localStorage` (https://html.spec.whatwg.org/multipage/webstorage.html#the-storage-interface)
 * shared by the "tabs" of one simulated origin, with switchable failures so
 * tests can check what happens when storage is blocked or full.
 *
 * Not simulated: named property access (`storage.foo`; use `getItem`/`setItem`),
 * `storage` events in other tabs, and a size quota.
 *
 * @module tab-baton/testing/storage
 */

/**
 * @typedef {'SecurityError' | 'QuotaExceededError'} StorageFailure
 */

/**
 * A `Storage` (the type of `localStorage`) kept in memory.
 */
class FakeStorage {
  #items = new Map();
  /** @type {StorageFailure | null} */
  #failure = null;

  /** Number of stored keys. */
  get length() {
    this.#check();
    return this.#items.size;
  }

  /**
   * The name of the `index`-th key (insertion order), or null.
   * @param {number} index
   * @returns {string | null}
   */
  key(index) {
    arity(arguments, 1, 'key');
    this.#check();
    return [...this.#items.keys()][index >>> 0] ?? null;
  }

  /**
   * @param {string} key
   * @returns {string | null}
   */
  getItem(key) {
    arity(arguments, 1, 'getItem');
    this.#check();
    return this.#items.get(`${key}`) ?? null;
  }

  /**
   * Stores `value` converted to a string, like the real one (`null` -> "null").
   * @param {string} key
   * @param {string} value
   */
  setItem(key, value) {
    arity(arguments, 2, 'setItem');
    this.#check('write');
    this.#items.set(`${key}`, `${value}`);
  }

  /** @param {string} key */
  removeItem(key) {
    arity(arguments, 1, 'removeItem');
    this.#check();
    this.#items.delete(`${key}`);
  }

  clear() {
    this.#check();
    this.#items.clear();
  }

  /**
   * Test hook, not part of `Storage`: makes calls throw a DOMException named
   * after `failure`, until `fail(false)`.
   * - 'SecurityError' (or `true`): every call throws, as when the user blocks
   *   site data (browsers then throw on `window.localStorage` itself).
   * - 'QuotaExceededError': only `setItem` throws, as when storage is full;
   *   reading and removing still work.
   * Stored data is kept either way.
   * @param {boolean | StorageFailure} failure
   */
  fail(failure) {
    if (failure === true) failure = 'SecurityError';
    if (![false, 'SecurityError', 'QuotaExceededError'].includes(failure)) {
      throw new TypeError(`unknown storage failure: ${String(failure)}`);
    }
    this.#failure = failure || null;
  }

  #check(access = 'read') {
    if (this.#failure === 'SecurityError' ||
        (this.#failure === 'QuotaExceededError' && access === 'write')) {
      throw new DOMException(`storage failure injected by the test (${this.#failure})`, this.#failure);
    }
  }
}

/**
 * Creates an empty `localStorage` for one simulated origin; hand the same
 * object to every tab so they share it.
 * @returns {FakeStorage}
 */
export function createStorage() {
  return new FakeStorage();
}

function arity(args, count, method) {
  if (args.length < count) {
    throw new TypeError(`Storage.${method} needs ${count} argument${count > 1 ? 's' : ''}`);
  }
}

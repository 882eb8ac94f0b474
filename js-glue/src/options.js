/**
 * Option checking. A wrong or missing option throws a TypeError whose message names it,
 * at the call that received it, before anything starts.
 *
 * @module tab-baton/options
 */

import { LIMITS } from './constants.js';

/** What the wire format carries (generated from wasm/core/wire.h), checked up front. */
export { LIMITS };

/**
 * The longest namespace, in bytes of UTF-8. Only the glue uses it (in the lock, channel and
 * storage names), so the limit is the glue's own.
 */
export const NAMESPACE_BYTES = 128;

const encoder = new TextEncoder();

function fail(where, name, expected, value) {
  return new TypeError(`${where}: option "${name}" must be ${expected} (got ${describe(value)})`);
}

function describe(value) {
  if (value === null) return 'null';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'function') return 'a function';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/**
 * Checks that `value` is a plain options object whose keys are all known.
 * @param {string} where the function, for the message
 * @param {string} name the argument's name
 * @param {any} value
 * @param {string[]} known
 * @param {{optional?: boolean}} [opts]
 * @returns {Record<string, any>}
 */
export function optionsObject(where, name, value, known, { optional = false } = {}) {
  if (value === undefined && optional) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`${where}: "${name}" must be an object (got ${describe(value)})`);
  }
  if (known) {
    for (const key of Object.keys(value)) {
      if (!known.includes(key)) throw new TypeError(`${where}: unknown option "${key}" (known: ${known.join(', ')})`);
    }
  }
  return value;
}

/**
 * A non-empty string option; `required` rejects undefined, `maxBytes` limits its UTF-8
 * length (`wireName: true` is short for the resource name limit).
 */
export function stringOption(where, opts, key, { required = false, fallback, maxBytes, wireName = false } = {}) {
  if (wireName && maxBytes === undefined) maxBytes = LIMITS.resourceBytes;
  const value = opts[key];
  if (value === undefined && !required) return fallback;
  return checkString(where, key, value, maxBytes);
}

/**
 * A non-empty, well-formed string of at most `maxBytes` bytes of UTF-8 (when given).
 * A lone surrogate has no UTF-8 form: the core would read it as U+FFFD, a different name
 * than the tab's own, so it is rejected rather than changed.
 */
export function checkString(where, name, value, maxBytes) {
  if (typeof value !== 'string' || value === '') throw fail(where, name, 'a non-empty string', value);
  if (LONE_SURROGATE.test(value)) throw fail(where, name, 'well-formed UTF-16 (it has a lone surrogate)', value);
  if (maxBytes !== undefined && utf8Length(value) > maxBytes) {
    throw fail(where, name, `at most ${maxBytes} bytes of UTF-8`, value);
  }
  return value;
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

export function utf8Length(value) {
  return encoder.encode(value).length;
}

/** A finite number option within [min, max]; `integer` also requires an integer. */
export function numberOption(where, opts, key, { fallback, min = 0, max = Number.MAX_SAFE_INTEGER, integer = false, above } = {}) {
  const value = opts[key];
  if (value === undefined) return fallback;
  const ok =
    typeof value === 'number' &&
    Number.isFinite(value) &&
    value >= min &&
    value <= max &&
    (above === undefined || value > above) &&
    (!integer || Number.isInteger(value));
  if (!ok) {
    const bound = above !== undefined ? `greater than ${above}` : `at least ${min}`;
    throw fail(where, key, `a finite ${integer ? 'integer' : 'number'} ${bound}`, value);
  }
  return value;
}

export function booleanOption(where, opts, key, fallback) {
  const value = opts[key];
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') throw fail(where, key, 'a boolean', value);
  return value;
}

export function functionOption(where, opts, key, { required = false } = {}) {
  const value = opts[key];
  if (value === undefined && !required) return undefined;
  if (typeof value !== 'function') throw fail(where, key, 'a function', value);
  return value;
}

export function oneOfOption(where, opts, key, choices, fallback) {
  const value = opts[key];
  if (value === undefined) return fallback;
  if (!choices.includes(value)) throw fail(where, key, `one of ${choices.map((c) => JSON.stringify(c)).join(', ')}`, value);
  return value;
}

/** An array of non-empty strings (capabilities). */
export function stringListOption(where, opts, key, { maxItems, maxBytes }) {
  const value = opts[key];
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length > maxItems) throw fail(where, key, `an array of at most ${maxItems} strings`, value);
  for (const item of value) checkString(where, key, item, maxBytes);
  return [...value];
}

/** An `env` option: an object, checked further when resolved. */
export function envOption(where, opts) {
  const value = opts.env;
  if (value === undefined) return undefined;
  if (value === null || (typeof value !== 'object' && typeof value !== 'function')) throw fail(where, 'env', 'an object', value);
  return value;
}

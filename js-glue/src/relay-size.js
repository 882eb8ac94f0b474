/**
 * The size of relayed data, estimated: what bounds the relay's buffers and its messages.
 * A structured-clone value is walked, but never further than the limit, so the walk costs
 * at most `limit` units of work whatever the value (deep, wide or cyclic).
 *
 * @module tab-baton/relay-size
 */

/** Bytes counted for a number, a boolean, null and undefined, and for each object or key. */
const SCALAR_BYTES = 8;

/**
 * Estimated bytes of `value`: strings one per UTF-16 unit, binary data by `byteLength`,
 * scalars and each object, array entry or key {@link SCALAR_BYTES}. Returns `Infinity` as
 * soon as the estimate exceeds `limit`.
 * @param {unknown} value
 * @param {number} limit
 * @returns {number}
 */
export function estimateBytes(value, limit) {
  let total = 0;
  const stack = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') total += item.length;
    else if (item === null || typeof item !== 'object') total += SCALAR_BYTES;
    else if (typeof item.byteLength === 'number') total += item.byteLength;
    else if (typeof item.size === 'number' && typeof item.slice === 'function') total += item.size; // a Blob
    else if (item instanceof Map) {
      total += SCALAR_BYTES;
      for (const [k, v] of item) {
        stack.push(k, v);
        if (stack.length > limit) return Infinity;
      }
    } else if (item instanceof Set) {
      total += SCALAR_BYTES;
      for (const v of item) {
        stack.push(v);
        if (stack.length > limit) return Infinity;
      }
    } else if (Array.isArray(item)) {
      total += SCALAR_BYTES;
      for (let i = 0; i < item.length; i += 1) {
        total += SCALAR_BYTES;
        if (total > limit) return Infinity;
        stack.push(item[i]);
      }
    } else {
      total += SCALAR_BYTES;
      for (const key of Object.keys(item)) {
        total += SCALAR_BYTES + key.length;
        if (total > limit) return Infinity;
        stack.push(item[key]);
      }
    }
    if (total > limit) return Infinity;
  }
  return total;
}

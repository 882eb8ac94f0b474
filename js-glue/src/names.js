/**
 * The names shared by every tab of one namespace and protocol version: the channel, the
 * Web Lock of each resource, the epoch counter and the lease record.
 *
 * A namespace or a resource goes into a name with `/` and `%` percent-encoded (`%2F`,
 * `%25`), so two distinct (namespace, resource) pairs never share a lock, a channel or a
 * counter ('app' + 'x/v1/y' and 'app/v1/x' + 'y' used to), and a plain name reads as is:
 * `baton/<namespace>/v<protocol>/<resource>`.
 *
 * A tab that holds a resource's lock also holds its marker lock, named after the lock and
 * this build's wire protocol: `<lock>/w<PROTOCOL_VERSION>`. An encoded resource has no
 * `/`, so no resource's lock has a marker's name. A steal goes ahead only when the marker
 * of our own wire version is held (web-locks.js): a holder that speaks another wire
 * version drops our frames as we drop its, so we could not hear it even when it is alive.
 *
 * @module tab-baton/names
 */

import { PROTOCOL_VERSION } from './constants.js';

/** One component of a name, with its separators escaped (injective, and the identity on plain names). */
export function encodeName(component) {
  return component.replace(/%/g, '%25').replace(/\//g, '%2F');
}

/** The epoch counter is not versioned on purpose: epochs must keep rising across deploys. */
export function namesFor(namespace, protocolVersion) {
  const ns = encodeName(namespace);
  const base = `baton/${ns}/v${protocolVersion}`;
  const lock = (resource) => `${base}/${encodeName(resource)}`;
  return {
    channel: base,
    lock,
    marker: (resource) => `${lock(resource)}/w${PROTOCOL_VERSION}`,
    // Taken for an instant to see whether navigator.locks answers (locks-probe.js); a
    // resource is never empty, so no resource's lock has this name.
    lockProbe: `${base}/`,
    epochKey: (resource) => `baton/${ns}/epoch/${encodeName(resource)}`,
    database: `baton/${namespace}`,
    leaseKey: (resource) => `v${protocolVersion}/${resource}`,
  };
}

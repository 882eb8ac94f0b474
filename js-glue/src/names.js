/**
 * The names shared by every tab of one namespace and protocol version: the channel, the
 * Web Lock of each resource, the epoch counter and the lease record.
 *
 * A namespace or a resource goes into a name with `/` and `%` percent-encoded (`%2F`,
 * `%25`), so two distinct (namespace, resource) pairs never share a lock, a channel or a
 * counter ('app' + 'x/v1/y' and 'app/v1/x' + 'y' used to), and a plain name reads as is:
 * `baton/<namespace>/v<protocol>/<resource>`.
 *
 * @module tab-baton/names
 */

/** One component of a name, with its separators escaped (injective, and the identity on plain names). */
export function encodeName(component) {
  return component.replace(/%/g, '%25').replace(/\//g, '%2F');
}

/** The epoch counter is not versioned on purpose: epochs must keep rising across deploys. */
export function namesFor(namespace, protocolVersion) {
  const ns = encodeName(namespace);
  const base = `baton/${ns}/v${protocolVersion}`;
  return {
    channel: base,
    lock: (resource) => `${base}/${encodeName(resource)}`,
    // Taken for an instant to see whether navigator.locks answers (locks-probe.js); a
    // resource is never empty, so no resource's lock has this name.
    lockProbe: `${base}/`,
    epochKey: (resource) => `baton/${ns}/epoch/${encodeName(resource)}`,
    database: `baton/${namespace}`,
    leaseKey: (resource) => `v${protocolVersion}/${resource}`,
  };
}

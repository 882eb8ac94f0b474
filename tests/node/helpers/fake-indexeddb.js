// The in-memory IndexedDB of tab-baton/testing, for the lease-mode and storage tests.
export { createIndexedDB } from 'tab-baton/testing';

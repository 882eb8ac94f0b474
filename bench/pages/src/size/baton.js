// What an app ships for leader election with Baton: the orchestrator (tree-shaken from the package).
export { createBaton } from 'tab-baton';

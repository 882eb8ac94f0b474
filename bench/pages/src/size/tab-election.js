// What an app ships for leader election with tab-election.
export { Tab } from 'tab-election';

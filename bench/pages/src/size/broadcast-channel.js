// What an app ships for leader election with broadcast-channel.
export { BroadcastChannel, createLeaderElection } from 'broadcast-channel';

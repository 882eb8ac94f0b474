// The "Requests to the leader" section of bench/RESULTS.md (phase requests, lib/requests.mjs).
import { TALK_SUBJECTS } from './requests.mjs';
import { ms, summarize, triple } from './stats.mjs';

export const REQUESTS_HEADING = '## Requests to the leader';

const ratio = (a, b) => (a === null || b === null || !b ? '–' : `${(a / b).toFixed(2)}×`);

/** Per library: round-trip and close summaries, counts. */
export function summarizeRequests(q) {
  return Object.fromEntries(TALK_SUBJECTS.map(({ key }) => {
    const x = q.results[key];
    const trials = x.close.filter((t) => t.trial !== undefined);
    return [key, {
      roundTrip: summarize(x.roundTrip),
      firstAnswer: summarize(trials.map((t) => t.firstAnswer)),
      trials: trials.length,
      answeredByNext: trials.filter((t) => t.firstAnswer !== null).length,
      unanswered: trials.reduce((n, t) => n + t.unanswered, 0),
      failures: [...new Set(trials.flatMap((t) => t.failures))],
      errors: x.close.filter((t) => t.error).map((t) => t.error),
    }];
  }));
}

export function requestsSection(r) {
  const q = r.requests;
  if (!q) return '';
  const c = q.config;
  const s = summarizeRequests(q);
  const rows = TALK_SUBJECTS.map(({ key, label }) => {
    const x = s[key];
    const notes = [...x.failures.map((f) => `unanswered: ${f}`), ...x.errors.map((e) => `error: ${e}`)].join('; ').slice(0, 200);
    return `| ${label} | ${ms(x.roundTrip.median, 2)} | ${ms(x.roundTrip.p95, 2)} | ${triple(x.firstAnswer)} | ${x.answeredByNext}/${x.trials} | ${x.unanswered} | ${notes} |`;
  });
  const b = s.baton;
  const t = s['tab-election'];
  return `${REQUESTS_HEADING}

${q.date} (\`${q.command}\`, 1-minute load average ${q.load1.toFixed(1)} at the start on ${r.machine.cores} cores). Baton's \`baton.request\` beside tab-election's \`tab.call\`, in the same browser: ${c.tabs} tabs per library, each its own window: one tab that asks and never leads, and ${c.tabs - 1} candidate leaders serving an echo that names the tab that answered (bench/pages/talk-baton.html, talk-tab-election.html; Baton with its default timings). **Round trip**: the asking tab asks the leader ${c.roundTrips} times, one request after the other, timed in the page; the libraries take turns in ${c.batches} slices. **Close**: the asking tab asks in a loop, the leader's tab is closed like a user closes it; time from the close command to the first answer from another tab (median / p95 / max over the trials), and the requests that got no answer within ${ms(c.timeoutMs, 0)} (tab-election's call gets the same timeout in the page; its own is 30 s). A new tab replaces the closed one; the trials alternate between the libraries.

| library | round trip p50 | round trip p95 | close → first answer from the next leader | answered by the next leader | requests unanswered | notes |
|---|---|---|---|---|---|---|
${rows.join('\n')}

tab-election ÷ Baton: round trip p50 ${ratio(t.roundTrip.median, b.roundTrip.median)}, p95 ${ratio(t.roundTrip.p95, b.roundTrip.p95)}; close → first answer, median ${ratio(t.firstAnswer.median, b.firstAnswer.median)}, p95 ${ratio(t.firstAnswer.p95, b.firstAnswer.p95)} (above 1: Baton is faster).
`;
}

/**
 * `markdown` (bench/RESULTS.md) with its requests section replaced by `section`, or, when it
 * has none, inserted before the reliability figures (the last part of the file).
 */
export function withRequestsSection(markdown, section) {
  const start = markdown.indexOf(`${REQUESTS_HEADING}\n`);
  if (start >= 0) {
    const next = markdown.indexOf('\n## ', start + REQUESTS_HEADING.length);
    return `${markdown.slice(0, start)}${section}${next >= 0 ? markdown.slice(next) : ''}`;
  }
  const reliability = markdown.indexOf('\n## Reliability');
  if (reliability < 0) return `${markdown}\n${section}`;
  return `${markdown.slice(0, reliability)}\n${section}${markdown.slice(reliability)}`;
}

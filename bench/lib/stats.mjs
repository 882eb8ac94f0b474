// Summary statistics and number formatting for the benchmark report.

/** Nearest-rank percentile of sorted values (p in 0..100). */
export function percentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

/** {n, median, p95, max, min, mean} of the finite values; nulls (no result) are counted apart. */
export function summarize(values) {
  const finite = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  const missing = values.length - finite.length;
  if (finite.length === 0) return { n: 0, missing, median: null, p95: null, max: null, min: null, mean: null };
  const mid = finite.length >> 1;
  const median = finite.length % 2 ? finite[mid] : (finite[mid - 1] + finite[mid]) / 2;
  return {
    n: finite.length,
    missing,
    median,
    p95: percentile(finite, 95),
    max: finite[finite.length - 1],
    min: finite[0],
    mean: finite.reduce((a, b) => a + b, 0) / finite.length,
  };
}

export function ms(v, digits = 1) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  if (!Number.isFinite(v)) return '∞';
  return Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(2)} s` : `${v.toFixed(digits)} ms`;
}

export function num(v, digits = 1) {
  if (v === null || v === undefined || Number.isNaN(v)) return '–';
  return v.toFixed(digits);
}

export function kb(bytes) {
  return bytes === null || bytes === undefined ? '–' : `${(bytes / 1024).toFixed(1)} KiB`;
}

export function bytesAndKb(bytes) {
  return bytes === null || bytes === undefined ? '–' : `${bytes} B (${(bytes / 1024).toFixed(1)} KiB)`;
}

/** "median / p95 / max (n)" */
export function triple(s, fmt = ms) {
  if (!s || s.n === 0) return s && s.missing ? `none of ${s.missing}` : '–';
  const extra = s.missing ? `, ${s.missing} none` : '';
  return `${fmt(s.median)} / ${fmt(s.p95)} / ${fmt(s.max)} (n=${s.n}${extra})`;
}

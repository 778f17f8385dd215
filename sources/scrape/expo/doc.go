// Package expo parses a Prometheus text (0.0.4) or OpenMetrics 1.0
// exposition into families of series, fast enough to scrape many targets
// every second, and validates what expfmt does not: duplicate
// series, NaN, non-monotonic or unsorted buckets, missing +Inf.
//
// Why not expfmt: prometheus/common v0.73.1's TextParser needs ~190 ms and
// 1.7 M allocations for a 50,000-line page on the reference machine, and
// its ABNF-based OpenMetrics decoder ~13 s for 5,000 lines; ttftop's
// budget is 50 ms per 50,000 lines and 5 % of a core for 50 targets at
// 1 Hz. This parser keeps expfmt's acceptance rules for the text format
// (values, escapes, quoted UTF-8 names, a final line without a newline is
// "unexpected end of input stream"), is tested against expfmt as an oracle
// on every fixture and fuzzed for panics, and uses expfmt.ResponseFormat
// for content negotiation (format.go).
//
// With Options.Want, lines of skipped families only get a structural
// check (name, optional {…}, a value), which keeps a 50,000-line page well
// under the budget; wanted families are parsed and validated in full.
//
// Syntax errors fail the whole page (a ParseError with its line). Semantic
// problems of one family (duplicates, bad buckets) are recorded in
// Family.Err so the caller can fail only the signals that use it.
package expo

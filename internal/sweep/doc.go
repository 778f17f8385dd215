// Package sweep finds an endpoint's capacity knee: it ramps closed-loop
// concurrency (1, 2, 4, … up to a maximum) with sources/probe requests,
// measures each step until its p95s are stable, and judges every step
// against the objectives. It is the logic of `ttftop sweep`.
//
// # A step
//
// A step at concurrency c keeps c requests in flight (the probe's
// schedule, so its safety ceilings apply: at most Limits.MaxConcurrency
// in flight and Limits.MaxPerMinute starts a minute). The first c
// requests are the warm-up wave (they all start together and queue
// behind each other's prefill) and are not judged. The step holds until
// it is stable: at least MinRequests judged requests (and 2c), and the
// TTFT and TPOT p95s moved by at most Tolerance (relative) since the
// previous check, checked every max(c, 5) requests. A step that is not
// stable after MaxStepTime ends anyway, marked unstable. Requests still
// in flight when a step ends are cancelled and not counted.
//
// Every figure of a step is the client's (probe) measurement:
//   - ttft/ttfa/tpot/e2e p95: exact sample quantiles over the judged
//     requests that succeeded (TPOT = (E2E − TTFT)/(n − 1), TTFA = first
//     answer token after any reasoning), missing (null) without samples;
//   - output_tps: output tokens that arrived within the measuring window
//     (from the first judged request's start to the earliest start of a
//     cancelled one, or the last completion), warm-up requests included,
//     per second of that window;
//   - achieved_concurrency: the mean number of requests in flight over
//     that window (below c when the rate ceiling throttled the step);
//   - goodput: the share of judged requests meeting every latency bound
//     of the objectives (failed requests count as not good) and their
//     output tokens per second (probe.GoodputOf).
//
// # Judging and stopping
//
// Percentile objectives are judged at their percentile over the step's
// samples, ratio objectives as the share meeting the threshold, the
// error-rate objective as failed / all requests, availability as the
// share that succeeded. The knee is the highest concurrency such that
// it and every lower step kept at least 90 % of their concurrency in
// flight and met every objective (an objective without data in a step is
// not met). A step below 90 % was held back by a ceiling (the start rate,
// the server's 429s, or the client): the sweep stops there and says so.
//
// The sweep stops after the maximum concurrency; when an objective is
// far exceeded (a latency above StopFactor × its threshold, an error
// rate above StopFactor × its budget); or at over-saturation: doubling
// the concurrency raised output tokens/s by less than 10 % while the TTFT
// p95 grew by half or more, or, within one step, TTFT rose with time
// (regression slope over the step's requests, t > 4, rising by at least
// the median and 50 ms) while output tokens/s stayed flat (the second half
// of the step at most 10 % above the first) — the server falls behind
// instead of serving more.
package sweep

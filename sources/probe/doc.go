// Package probe measures an LLM endpoint from the outside: it sends real
// streaming requests and times the events as they arrive, the way a user's
// client sees them (TTFT, TPOT, ITL, E2E, decode tok/s), with the
// definitions of docs/definitions.md, so figures compare with vLLM's
// `bench serve`.
//
// One measurement core serves every wire format; a Protocol only builds the
// request body and says what each event carries (text, token counts,
// terminal, error). Framing (SSE or NDJSON) is shared, and every event is
// stamped when its first byte is read, before any JSON is decoded.
//
// Failures are data: a failed request yields a Result with an ErrorKind and
// never a latency sample.
package probe

// Definitions states, in a few lines, what the probe's figures mean. The
// docs/numbers.md, `ttftop probe` and the TUI help print these same words.
const Definitions = `Probe definitions (monotonic clock; start = just before the request is written to the connection):
  token-bearing event  an event carrying non-empty output text (content, reasoning, tool-call arguments);
                       role-only, empty, ping/comment, progress and usage-only events do not count
  TTFT     first token-bearing event − start (connect/TLS are reported apart, not included)
  E2E      last token-bearing event − start (terminal, usage and EOF events are not)
  n        output tokens reported by the server (usage or engine count); else the number of
           token-bearing events, flagged as estimated (output_tokens_source = events)
  TPOT     (E2E − TTFT) / (n − 1), for n > 1 and at least two token-bearing events
  ITL      gaps between consecutive token-bearing events, with tokens per event
  tok/s    decode rate (n − 1) / (E2E − TTFT)
  TTFB     first response header byte − start (not a token)
  TTFA     first token-bearing event with answer text or a tool call − start: after the reasoning
           of a model that thinks first (reasoning_content, thinking, a leading <think>…</think>),
           = TTFT without reasoning
  tool_ms  first token-bearing event with tool-call arguments − start
  reasoning_tok, answer_tok  output tokens of each phase, summing to n: the server's reasoning
           count (usage details), else from tokens per event, else n shared by each phase's
           events (estimated, ~); reasoning_tpot / answer_tpot: each phase's own TPOT
  goodput  share of requests meeting every latency objective (--slo-*); good tok/s = their
           output tokens / duration`

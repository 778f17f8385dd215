// Package record writes ttftop's observations to a file and plays them
// back, so a session can be replayed in the dashboard or queried later
// (`ttftop replay FILE`, `--at TIME`).
//
// # Format
//
// A recording is JSON lines, gzip-compressed when the name ends in ".gz":
//
//	{"kind":"header","at":…,"format":"ttftop-recording","version":3}
//	{"kind":"checkpoint","at":"0001-01-01T00:00:00Z","line":2}
//	{"kind":"settings","at":…,"settings":{"slo":{"objectives":[…],…},"store":{…}}}
//	{"kind":"settings","at":…,"settings":{"view":{"window":…,"refresh":…}}}
//	{"kind":"checkpoint","at":…,"seq":1,"line":5}
//	{"kind":"sample","at":…,"endpoint":…,"signal":"ttft","source":…,"value":0.123}
//	{"kind":"alert","at":…,"alert":{…}}
//	…
//	{"kind":"checkpoint","at":…,"seq":2,"line":…,"observations":…}
//	{"state":true,"kind":"endpoint",…}
//	…
//	{"kind":"end","at":…,"line":…,"observations":…}
//
// The closing "end" line (version 3) is written by Close: a recording
// without it was cut (its writer killed or crashed), even when the cut
// fell on a line boundary; a reader reports that as an unfinished
// recording (DamageError.Unfinished) after everything before it.
//
// Observation lines are telemetry.Observation's JSON, except that values
// JSON cannot hold (NaN, ±Inf: a histogram's +Inf bucket, a 0/0 ratio) are
// written as the strings "NaN", "+Inf" and "-Inf".
//
// Settings lines (format version 2; Settings) say how live judged and
// showed the session; they come in segment 0, before any observation, so
// a replay reads them first. Version-1 recordings have none.
//
// Times are UTC. The file is cut into segments of a minute of recording
// time (segment 0 holds only the header and settings). Each starts with a
// checkpoint line and the state needed to read from there alone: the last
// endpoint announcement, source status, value and status of every track
// seen so far, the latest transition of every alert and the last resolved
// ones, in their original order (lines marked "state":true, which a
// sequential read skips since it has seen the originals). Probe records
// and live text are history, not state: a seek shows the ones after the
// segment it starts from. In a .gz file each segment is its
// own gzip member, so reading can start at any segment. The offsets of the
// segments are appended to a sidecar index, FILE.idx (copy it with the
// recording), so seeking in a day of recording reads minutes of it instead
// of all of it; without the index, or with a stale one, a reader rebuilds
// it by scanning the file (30 s for a day of 50 endpoints).
package record

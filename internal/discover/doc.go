// Package discover finds the LLM servers of a machine without being told
// where they are: the listening sockets of /proc/net/tcp and tcp6 joined
// to the processes that own them (engines named in engines.Processes, their
// --port and --host flags), plus the engines' well-known ports; then each
// candidate is fingerprinted with GETs only (its model list, its /metrics)
// before it counts as found. Something that does not answer like an LLM
// server is left alone: it never gets a generation request.
package discover

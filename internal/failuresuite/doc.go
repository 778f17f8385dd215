// Package failuresuite holds ttftop's failure suite: end-to-end tests
// that build the real binary and run it against the simulator and real
// servers on loopback (Alertmanager, Prometheus, VictoriaMetrics, tiny
// misbehaving HTTP servers), asserting what the user sees (a tmux screen,
// headless JSON lines, stderr) and what is delivered (alerts in a real
// Alertmanager, recordings that replay). It has no code outside its tests;
// docs/failures.md says what it covers and how to run it.
package failuresuite

// Package httpclient is the HTTP client shared by ttftop's network
// sources (scrape, gpu, later probe and promql): bearer token and custom
// headers from env or file, re-read on every request; a CA file; TLS
// verification on unless explicitly disabled; a redirect limit that never
// forwards credentials to another host; a body cap; and errors that never
// carry a secret and are sanitised for the terminal.
package httpclient

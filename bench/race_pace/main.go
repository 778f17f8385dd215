// Command race_pace serves an OpenAI chat stream at a fixed pace, for
// bench/race_bandwidth.sh: one token per event every 1/tps seconds after
// the first, words of about 4.5 characters as real tokens are, model "m".
//
//	race_pace -listen 127.0.0.1:18501 -tps 300 -tokens 60000
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

var words = []string{"the ", "model ", "streams ", "a ", "token ", "every ", "few ", "ms", ", ", "and ", "we ", "count ", "bytes ", "on ", "the ", "wire", ". "}

func main() {
	listen := flag.String("listen", "127.0.0.1:18501", "loopback address to serve on")
	tps := flag.Float64("tps", 300, "tokens per second")
	tokens := flag.Int("tokens", 60000, "tokens per answer")
	flag.Parse()
	gap := time.Duration(float64(time.Second) / *tps)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"m","object":"model","owned_by":"vllm"}]}`))
	})
	mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		f, _ := w.(http.Flusher)
		start := time.Now()
		for i := range *tokens {
			timer := time.NewTimer(time.Until(start.Add(time.Duration(i) * gap)))
			select {
			case <-timer.C:
			case <-r.Context().Done():
				timer.Stop()
				return
			}
			chunk := `data: {"object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":` +
				strconv.Quote(words[i%len(words)]) + `},"finish_reason":null}]}` + "\n\n"
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
			if f != nil {
				f.Flush()
			}
		}
		_, _ = fmt.Fprintf(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}],\"usage\":{\"completion_tokens\":%d}}\n\ndata: [DONE]\n\n", *tokens)
	})
	if err := http.ListenAndServe(*listen, mux); err != nil {
		fmt.Fprintln(os.Stderr, "race_pace:", err)
		os.Exit(1)
	}
}

package sim

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
)

// Engine-level errors; the HTTP layer maps them to status codes.
var (
	// ErrQueueFull: the model's waiting queue is at MaxQueue (HTTP 429).
	ErrQueueFull = errors.New("sim: waiting queue full")
	// ErrOutage: a scenario outage is in progress (HTTP 503).
	ErrOutage = errors.New("sim: model unavailable (scenario outage)")
	// ErrClosed: the server is shutting down (HTTP 503).
	ErrClosed = errors.New("sim: server closed")
	// ErrAborted: the request was cancelled by its client.
	ErrAborted = errors.New("sim: request aborted")
	// ErrUnknownModel: no served model has that name (HTTP 404).
	ErrUnknownModel = errors.New("sim: unknown model")
)

// apiError is an OpenAI-style error: {"error":{"message","type","param","code"}}.
type apiError struct {
	Status     int
	Message    string
	Type       string
	Param      string
	RetryAfter int // seconds; 0 = no header
}

func (e *apiError) Error() string { return e.Message }

func badRequest(param, msg string) *apiError {
	return &apiError{Status: http.StatusBadRequest, Type: "BadRequestError", Param: param, Message: msg}
}

// body renders the JSON error in vLLM's field order; param is null when
// empty.
func (e *apiError) body() []byte {
	type info struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    int     `json:"code"`
	}
	in := info{Message: e.Message, Type: e.Type, Code: e.Status}
	if e.Param != "" {
		in.Param = &e.Param
	}
	b, _ := json.Marshal(struct {
		Error info `json:"error"`
	}{in})
	return b
}

func writeAPIError(w http.ResponseWriter, e *apiError) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		h.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	w.WriteHeader(e.Status)
	w.Write(e.body())
}

package telemetry

import (
	"fmt"
	"testing"
)

// A base model's adapters are those naming it on its own server; an
// adapter of another server's copy of the model, or of a model not
// served, is not one of them.
func TestAdaptersOf(t *testing.T) {
	ep := func(name, model, url, base string) EndpointSnapshot {
		e := Endpoint{Name: name, Model: model, BaseURL: url}
		if base != "" {
			e.Labels = map[string]string{LabelAdapterOf: base}
		}
		return EndpointSnapshot{Endpoint: e}
	}
	snap := Snapshot{Endpoints: []EndpointSnapshot{
		ep("h:1/sql-lora", "sql-lora", "http://h:1", "llama"),
		ep("h:1/llama", "llama", "http://h:1", ""),
		ep("g:1/llama", "llama", "http://g:1", ""),
		ep("g:1/x-lora", "x-lora", "http://g:1", "llama"),
		ep("h:1/chat-lora", "chat-lora", "http://h:1", "llama"),
		ep("h:1/o-lora", "o-lora", "http://h:1", "qwen"),
	}}
	if got := fmt.Sprint(AdaptersOf(snap, "h:1/llama")); got != "[chat-lora sql-lora]" {
		t.Errorf("h:1/llama's adapters %s, want [chat-lora sql-lora]", got)
	}
	if got := fmt.Sprint(AdaptersOf(snap, "g:1/llama")); got != "[x-lora]" {
		t.Errorf("g:1/llama's adapters %s, want [x-lora]", got)
	}
	if got := AdaptersOf(snap, "h:1/o-lora"); got != nil {
		t.Errorf("an adapter has adapters: %v", got)
	}
}

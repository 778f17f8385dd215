package engines

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

func TestImageOf(t *testing.T) {
	for ref, want := range map[string]telemetry.Engine{
		"vllm/vllm-openai:v0.11.0":                            telemetry.EngineVLLM,
		"docker.io/vllm/vllm-openai@sha256:0123":              telemetry.EngineVLLM,
		"lmsysorg/sglang:latest":                              telemetry.EngineSGLang,
		"ghcr.io/huggingface/text-generation-inference:3.3":   telemetry.EngineTGI,
		"ghcr.io/ggml-org/llama.cpp:server-cuda":              telemetry.EngineLlamaCpp,
		"nvcr.io/nim/meta/llama-3.1-8b-instruct:1.8":          telemetry.EngineNIM,
		"nvcr.io/nvidia/tritonserver:25.01-trtllm-python-py3": telemetry.EngineTriton,
		"localhost:5000/ollama/ollama":                        telemetry.EngineOllama,
	} {
		im, ok := ImageOf(ref)
		if !ok || im.Engine != want {
			t.Errorf("ImageOf(%q) = %v, %v; want %s", ref, im.Engine, ok, want)
		}
	}
	for _, ref := range []string{"nginx:1.27", "postgres", "myorg/vllm-proxy:1", "registry:5000/notvllm-openai"} {
		if im, ok := ImageOf(ref); ok {
			t.Errorf("ImageOf(%q) = %s; want none", ref, im.Engine)
		}
	}
}

package engines

import (
	"testing"

	"github.com/ttftop/ttftop/telemetry"
)

// Command lines as engines are started, and the port each names.
func TestProcessOf(t *testing.T) {
	cases := []struct {
		argv   []string
		engine telemetry.Engine // "" = not an engine
		port   string
	}{
		{[]string{"/usr/bin/python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--port", "8001"}, telemetry.EngineVLLM, "8001"},
		{[]string{"/opt/venv/bin/python", "/opt/venv/bin/vllm", "serve", "m", "--port=9000"}, telemetry.EngineVLLM, "9000"},
		{[]string{"python", "-m", "sglang.launch_server", "--model-path", "m"}, telemetry.EngineSGLang, ""},
		{[]string{"lmdeploy", "serve", "api_server", "m", "--server-port", "23334"}, telemetry.EngineLMDeploy, "23334"},
		{[]string{"/opt/tritonserver/bin/tritonserver", "--model-repository=/models", "--http-port=8010"}, telemetry.EngineTriton, "8010"},
		{[]string{"text-generation-launcher", "--model-id", "m", "--port", "3001"}, telemetry.EngineTGI, "3001"},
		{[]string{"./llama-server", "-m", "x.gguf"}, telemetry.EngineLlamaCpp, ""},
		{[]string{"ollama", "serve"}, telemetry.EngineOllama, ""},
		// An argument that merely names an engine is not one.
		{[]string{"python", "train.py", "--out", "/data/vllm"}, "", ""},
		{[]string{"python", "-m", "vllm_tools.bench"}, "", ""},
		{[]string{"bash", "-c", "echo", "vllm"}, "", ""},
	}
	for _, c := range cases {
		p, ok := ProcessOf(c.argv)
		if ok != (c.engine != "") || (ok && p.Engine != c.engine) {
			t.Errorf("%q: engine %q (ok %v), want %q", c.argv, p.Engine, ok, c.engine)
			continue
		}
		if !ok {
			continue
		}
		port, _, has := FlagValue(c.argv, p.PortFlags)
		if port != c.port || has != (c.port != "") {
			t.Errorf("%q: port %q (%v), want %q", c.argv, port, has, c.port)
		}
	}
}

package engines

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// Process is how an engine's server process shows itself in a process
// list: the command names and Python modules that start it, the flags
// that set its HTTP port and address, and the port it listens on when
// none is given. Local and SSH discovery read it (internal/discover).
type Process struct {
	Engine telemetry.Engine
	// Commands are executable base names (argv[0], or the script a Python
	// interpreter runs).
	Commands []string
	// Modules are `python -m` module prefixes.
	Modules []string
	// PortFlags and HostFlags set the HTTP server's port and address.
	PortFlags, HostFlags []string
	// DefaultPort is the HTTP port when no flag sets it.
	DefaultPort int
}

// Processes is the table of engine processes, one row per engine.
func Processes() []Process {
	port, host := []string{"--port"}, []string{"--host"}
	return []Process{
		{Engine: telemetry.EngineVLLM, Commands: []string{"vllm"}, Modules: []string{"vllm.entrypoints"}, PortFlags: port, HostFlags: host, DefaultPort: 8000},
		{Engine: telemetry.EngineSGLang, Commands: []string{"sglang"}, Modules: []string{"sglang.launch_server", "sglang.srt"}, PortFlags: port, HostFlags: host, DefaultPort: 30000},
		{Engine: telemetry.EngineTGI, Commands: []string{"text-generation-launcher", "text-generation-router"}, PortFlags: port, HostFlags: []string{"--hostname"}, DefaultPort: 3000},
		{Engine: telemetry.EngineLlamaCpp, Commands: []string{"llama-server"}, PortFlags: port, HostFlags: host, DefaultPort: 8080},
		{Engine: telemetry.EngineOllama, Commands: []string{"ollama"}, DefaultPort: 11434},
		{Engine: telemetry.EngineTRTLLM, Commands: []string{"trtllm-serve"}, Modules: []string{"tensorrt_llm.commands.serve"}, PortFlags: port, HostFlags: host, DefaultPort: 8000},
		{Engine: telemetry.EngineLMDeploy, Commands: []string{"lmdeploy"}, Modules: []string{"lmdeploy.serve"}, PortFlags: []string{"--server-port"}, HostFlags: []string{"--server-name"}, DefaultPort: 23333},
		{Engine: telemetry.EngineTriton, Commands: []string{"tritonserver"}, PortFlags: []string{"--http-port"}, HostFlags: []string{"--http-address"}, DefaultPort: 8000},
		{Engine: telemetry.EngineDynamo, Modules: []string{"dynamo.frontend"}, PortFlags: []string{"--http-port"}, HostFlags: []string{"--http-host"}, DefaultPort: 8000},
	}
}

// ProcessOf finds the engine a command line starts: argv[0]'s base name,
// the script an interpreter runs, or a `-m` module. Only the first few
// words are read, so an argument that merely names an engine (a model
// path "…/vllm/…") does not count.
func ProcessOf(argv []string) (Process, bool) {
	for i, a := range argv[:min(len(argv), 3)] {
		base := filepath.Base(a)
		for _, p := range Processes() {
			for _, c := range p.Commands {
				if base == c {
					return p, true
				}
			}
			if i > 0 && argv[i-1] == "-m" {
				for _, m := range p.Modules {
					if a == m || strings.HasPrefix(a, m+".") {
						return p, true
					}
				}
			}
		}
	}
	return Process{}, false
}

// FlagValue is the value of the first of names in argv ("--port 8000"
// or "--port=8000"); ok is false when none is given.
func FlagValue(argv, names []string) (value, flag string, ok bool) {
	for i, a := range argv {
		for _, n := range names {
			switch {
			case a == n && i+1 < len(argv):
				return argv[i+1], n, true
			case strings.HasPrefix(a, n+"="):
				return a[len(n)+1:], n, true
			}
		}
	}
	return "", "", false
}

// WellKnownPorts are the engines' default HTTP ports, lowest first, each
// with the engines that use it: what a scan of a host's loopback tries.
func WellKnownPorts() map[int][]telemetry.Engine {
	out := map[int][]telemetry.Engine{}
	for _, p := range Processes() {
		if !slices.Contains(out[p.DefaultPort], p.Engine) {
			out[p.DefaultPort] = append(out[p.DefaultPort], p.Engine)
		}
	}
	return out
}

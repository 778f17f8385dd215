package engines

import (
	"strings"

	"github.com/ttftop/ttftop/telemetry"
)

// Image is how an engine's container images are named: what Kubernetes
// discovery falls back on when a pod carries none of the known labels.
type Image struct {
	Engine telemetry.Engine
	// Repositories are matched against the image reference's repository
	// path (registry and tag aside), as a suffix of whole path elements.
	Repositories []string
	// DefaultPort is the HTTP port of the image's server.
	DefaultPort int
}

// Images is the table of engine images, one row per engine.
func Images() []Image {
	return []Image{
		{Engine: telemetry.EngineVLLM, Repositories: []string{"vllm/vllm-openai", "vllm-openai", "llm-d/llm-d", "llm-d"}, DefaultPort: 8000},
		{Engine: telemetry.EngineSGLang, Repositories: []string{"lmsysorg/sglang", "sglang"}, DefaultPort: 30000},
		{Engine: telemetry.EngineTGI, Repositories: []string{"huggingface/text-generation-inference", "text-generation-inference"}, DefaultPort: 80},
		{Engine: telemetry.EngineLlamaCpp, Repositories: []string{"ggml-org/llama.cpp", "ggerganov/llama.cpp", "llama.cpp"}, DefaultPort: 8080},
		{Engine: telemetry.EngineOllama, Repositories: []string{"ollama/ollama", "ollama"}, DefaultPort: 11434},
		{Engine: telemetry.EngineTRTLLM, Repositories: []string{"nvidia/tensorrt-llm/release", "tensorrt-llm"}, DefaultPort: 8000},
		{Engine: telemetry.EngineLMDeploy, Repositories: []string{"openmmlab/lmdeploy", "lmdeploy"}, DefaultPort: 23333},
		{Engine: telemetry.EngineTriton, Repositories: []string{"nvidia/tritonserver", "tritonserver"}, DefaultPort: 8000},
		{Engine: telemetry.EngineDynamo, Repositories: []string{"nvidia/ai-dynamo/vllm-runtime", "ai-dynamo"}, DefaultPort: 8000},
	}
}

// nimRegistry is where NVIDIA NIM images live: any repository under it
// is a NIM (served on 8000).
const nimRegistry = "nvcr.io/nim/"

// ImageOf finds the engine a container image runs; ok is false for an
// image of none of the table's engines.
func ImageOf(ref string) (Image, bool) {
	if strings.HasPrefix(ref, nimRegistry) {
		return Image{Engine: telemetry.EngineNIM, DefaultPort: 8000}, true
	}
	repo := repository(ref)
	for _, im := range Images() {
		for _, r := range im.Repositories {
			if repo == r || strings.HasSuffix(repo, "/"+r) {
				return im, true
			}
		}
	}
	return Image{}, false
}

// DefaultPort is an engine's default HTTP port from the image table (0
// when unknown).
func DefaultPort(e telemetry.Engine) int {
	if e == telemetry.EngineNIM {
		return 8000
	}
	for _, im := range Images() {
		if im.Engine == e {
			return im.DefaultPort
		}
	}
	return 0
}

// repository is ref without its tag or digest.
func repository(ref string) string {
	ref, _, _ = strings.Cut(ref, "@")
	if i := strings.LastIndex(ref, ":"); i > strings.LastIndex(ref, "/") {
		ref = ref[:i]
	}
	return ref
}

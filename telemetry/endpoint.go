package telemetry

import "fmt"

// Engine names the serving engine behind an endpoint.
type Engine string

const (
	EngineUnknown   Engine = "unknown"
	EngineVLLM      Engine = "vllm"
	EngineSGLang    Engine = "sglang"
	EngineTGI       Engine = "tgi"
	EngineLlamaCpp  Engine = "llamacpp"
	EngineLMDeploy  Engine = "lmdeploy"
	EngineNIM       Engine = "nim"
	EngineTRTLLM    Engine = "trtllm"
	EngineTriton    Engine = "triton"
	EngineDynamo    Engine = "dynamo" // NVIDIA Dynamo's HTTP frontend (dynamo_frontend_*)
	EngineOllama    Engine = "ollama"
	EngineOpenAI    Engine = "openai"
	EngineAnthropic Engine = "anthropic"
)

// LabelReplicasCounted is a model row's label while some of its replicas
// have stopped: "N of M replicas: …", how many its summed figures count.
const LabelReplicasCounted = "replicas_counted"

// ReplicasCounted reads LabelReplicasCounted: the replicas a model row's
// summed figures count, of how many; ok is false without the label.
func (e Endpoint) ReplicasCounted() (counted, of int, ok bool) { return e.nOfM(LabelReplicasCounted) }

// nOfM reads a label "N of M …"; ok is false without it.
func (e Endpoint) nOfM(label string) (n, m int, ok bool) {
	v := e.Labels[label]
	if v == "" {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(v, "%d of %d", &n, &m); err != nil {
		return 0, 0, false
	}
	return n, m, true
}

// Endpoint is one model served at one place. Name is its key everywhere
// (observations, config, SLOs, JSON). All strings are sanitised by the
// source that discovered them.
type Endpoint struct {
	Name    string            `json:"name"`
	BaseURL string            `json:"url,omitempty"`
	Model   string            `json:"model,omitempty"`
	Engine  Engine            `json:"engine,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Group is, for one replica of a model served by several instances
	// (PromQL mode), the name of the endpoint that aggregates them; empty
	// otherwise.
	Group string `json:"group,omitempty"`
	// Replica is that replica's identity (pod, else instance).
	Replica string `json:"replica,omitempty"`
	// Aggregate marks an endpoint whose figures combine its replicas
	// (summed histograms and counts; gauges as the engine table aggregates
	// them); its replicas name it in Group.
	Aggregate bool `json:"aggregate,omitempty"`
}

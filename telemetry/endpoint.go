package telemetry

import (
	"fmt"
	"strings"
	"time"
)

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
	EngineLLMD      Engine = "llm-d"  // the llm-d router's endpoint picker (llm_d_epp_*)
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

// LabelRestarted is an endpoint's label for a while after its source saw
// it restart (its counters went back, or its samples came back after a
// stop): "<RFC 3339 time> <how>". Its rates started afresh then; views
// mark it RESTARTED. Sources take it off RestartedFor after the restart
// (PromQL: after its rate window, when longer).
const LabelRestarted = "restarted"

// RestartedFor is how long an endpoint stays marked restarted.
const RestartedFor = 5 * time.Minute

// RestartedLabel is LabelRestarted's value for a restart at at, seen as how
// ("counter reset").
func RestartedLabel(at time.Time, how string) string {
	return at.UTC().Format(time.RFC3339) + " " + how
}

// Restarted reads LabelRestarted: when the endpoint restarted and how it
// was seen; ok is false without the label.
func (e Endpoint) Restarted() (at time.Time, how string, ok bool) {
	v := e.Labels[LabelRestarted]
	stamp, how, _ := strings.Cut(v, " ")
	at, err := time.Parse(time.RFC3339, stamp)
	if v == "" || err != nil {
		return time.Time{}, "", false
	}
	return at, how, true
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
	// Unmeasurable names the signals the endpoint's engine metrics can
	// never give, with why ("TGI exposes no TTFT histogram"), as the
	// source that reads them says (engines.Unmeasurable): an objective on
	// one of them cannot be judged from the server's side, however long
	// one waits. A probe may still measure it (client signals).
	Unmeasurable map[Signal]string `json:"unmeasurable,omitempty"`
}

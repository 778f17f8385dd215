package kube

import (
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/ttftop/ttftop/engines"
	"github.com/ttftop/ttftop/telemetry"
)

// Labels of the conventions model pods are found by.
const (
	labelLLMDRole      = "llm-d.ai/role"
	labelLLMDEngine    = "llm-d.ai/engine-type"
	labelKServe        = "serving.kserve.io/inferenceservice"
	labelLWSName       = "leaderworkerset.sigs.k8s.io/name"
	labelLWSWorker     = "leaderworkerset.sigs.k8s.io/worker-index"
	labelDynamoType    = "nvidia.com/dynamo-component-type"
	labelDynamoSubType = "nvidia.com/dynamo-sub-component-type"
	labelDynamoGraph   = "nvidia.com/dynamo-graph-deployment-name"
	labelManagedBy     = "app.kubernetes.io/managed-by"
	labelAppName       = "app.kubernetes.io/name"
	labelAppComponent  = "app.kubernetes.io/component"
	nimOperator        = "k8s-nim-operator"
)

// match is what a convention says of a pod.
type match struct {
	// Convention says how the pod was recognised, for the found label
	// ("llm-d.ai/role=prefill").
	Convention string
	Engine     telemetry.Engine
	// Role is the pod's part in disaggregated serving: prefill, decode,
	// or "" (both, or not said).
	Role string
	// Group is the owner named by the convention itself ("InferenceService
	// qwen"), when it names one.
	Group string
	// ScrapeOnly: the pod exports /metrics but serves no OpenAI API (a
	// Dynamo worker behind its frontend).
	ScrapeOnly bool
}

// classify says whether pod serves a model and by which convention;
// skip, when not "", says why a pod a convention names is left out (a
// LeaderWorkerSet worker: its leader serves).
func classify(pod *corev1.Pod) (m match, ok bool, skip string) {
	l := pod.Labels
	engine := imageEngine(pod)
	if r, has := l[labelLLMDRole]; has {
		e := telemetry.Engine(strings.ToLower(l[labelLLMDEngine]))
		if e == "" {
			e = engine
		}
		return match{Convention: labelLLMDRole + "=" + r, Engine: e, Role: role(r)}, true, ""
	}
	if w, has := l[labelLWSWorker]; has {
		lws := l[labelLWSName]
		if w != "0" {
			return match{}, false, "worker " + w + " of LeaderWorkerSet " + lws + " (its leader serves the API)"
		}
		return match{Convention: labelLWSWorker + "=0 (leader)", Engine: engine, Group: "LeaderWorkerSet " + lws}, true, ""
	}
	if isvc, has := l[labelKServe]; has {
		return match{Convention: labelKServe + "=" + isvc, Engine: engine, Group: "InferenceService " + isvc}, true, ""
	}
	if t, has := l[labelDynamoType]; has {
		graph := l[labelDynamoGraph]
		m := match{Convention: labelDynamoType + "=" + t, Engine: engine}
		if graph != "" {
			m.Group = "DynamoGraphDeployment " + graph
		}
		switch t {
		case "frontend":
			m.Engine = telemetry.EngineDynamo
		case "worker":
			m.ScrapeOnly, m.Role = true, role(l[labelDynamoSubType])
		default:
			return match{}, false, "Dynamo " + t + " (not a model server)"
		}
		return m, true, ""
	}
	if l[labelManagedBy] == nimOperator {
		return match{Convention: labelManagedBy + "=" + nimOperator, Engine: telemetry.EngineNIM}, true, ""
	}
	for _, key := range []string{labelAppName, labelAppComponent} {
		if e, known := engineNamed(l[key]); known {
			return match{Convention: key + "=" + l[key], Engine: e}, true, ""
		}
	}
	if engine != "" {
		return match{Convention: "image " + imageOf(pod, engine), Engine: engine}, true, ""
	}
	return match{}, false, ""
}

// role reads a P/D role label: prefill or decode, "" for both or none.
func role(v string) string {
	switch v = strings.ToLower(v); v {
	case "prefill", "decode":
		return v
	}
	return ""
}

// engineNamed reads an app label naming an engine ("vllm",
// "text-generation-inference", "llama-cpp").
func engineNamed(v string) (telemetry.Engine, bool) {
	v = strings.ToLower(v)
	if v == "" {
		return "", false
	}
	aliases := map[string]telemetry.Engine{"text-generation-inference": telemetry.EngineTGI, "llama-cpp": telemetry.EngineLlamaCpp,
		"llama.cpp": telemetry.EngineLlamaCpp, "tensorrt-llm": telemetry.EngineTRTLLM, "tritonserver": telemetry.EngineTriton}
	if e, ok := aliases[v]; ok {
		return e, true
	}
	e := telemetry.Engine(v)
	return e, engines.DefaultPort(e) != 0
}

// imageEngine is the engine the pod's first recognised container image
// runs ("" when none).
func imageEngine(pod *corev1.Pod) telemetry.Engine {
	for _, c := range pod.Spec.Containers {
		if im, ok := engines.ImageOf(c.Image); ok {
			return im.Engine
		}
	}
	return ""
}

// imageOf is the image of the container running engine.
func imageOf(pod *corev1.Pod, engine telemetry.Engine) string {
	for _, c := range pod.Spec.Containers {
		if im, ok := engines.ImageOf(c.Image); ok && im.Engine == engine {
			return c.Image
		}
	}
	return ""
}

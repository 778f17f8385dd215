package kube

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/ttftop/ttftop/telemetry"
)

// testPod is a pod with labels, annotations, one container's image and
// named ports ("metrics=9090").
func testPod(labels, annotations map[string]string, image string, ports map[string]int32) *corev1.Pod {
	c := corev1.Container{Name: "server", Image: image}
	for name, n := range ports {
		c.Ports = append(c.Ports, corev1.ContainerPort{Name: name, ContainerPort: n})
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", Labels: labels, Annotations: annotations},
		Spec: corev1.PodSpec{Containers: []corev1.Container{c}}}
}

func TestClassifyConventions(t *testing.T) {
	for _, tc := range []struct {
		name        string
		pod         *corev1.Pod
		engine      telemetry.Engine
		role, group string
		convention  string
		scrapeOnly  bool
	}{
		{name: "llm-d prefill", pod: testPod(map[string]string{labelLLMDRole: "prefill", labelLLMDEngine: "sglang"}, nil, "ghcr.io/llm-d/llm-d:v0.3", nil),
			engine: telemetry.EngineSGLang, role: "prefill", convention: "llm-d.ai/role=prefill"},
		{name: "llm-d both, engine from image", pod: testPod(map[string]string{labelLLMDRole: "both"}, nil, "vllm/vllm-openai:v0.11.0", nil),
			engine: telemetry.EngineVLLM, convention: "llm-d.ai/role=both"},
		{name: "kserve", pod: testPod(map[string]string{labelKServe: "llama", "component": "predictor"}, nil, "kserve/huggingfaceserver:v0.15", nil),
			group: "InferenceService llama", convention: labelKServe + "=llama"},
		{name: "lws leader", pod: testPod(map[string]string{labelLWSName: "big", labelLWSWorker: "0"}, nil, "lmsysorg/sglang:v0.5", nil),
			engine: telemetry.EngineSGLang, group: "LeaderWorkerSet big", convention: labelLWSWorker + "=0 (leader)"},
		{name: "dynamo frontend", pod: testPod(map[string]string{labelDynamoType: "frontend", labelDynamoGraph: "g"}, nil, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6", nil),
			engine: telemetry.EngineDynamo, group: "DynamoGraphDeployment g", convention: labelDynamoType + "=frontend"},
		{name: "dynamo decode worker", pod: testPod(map[string]string{labelDynamoType: "worker", labelDynamoSubType: "decode", labelDynamoGraph: "g"}, nil, "nvcr.io/nvidia/ai-dynamo/vllm-runtime:0.6", nil),
			engine: telemetry.EngineDynamo, role: "decode", group: "DynamoGraphDeployment g", convention: labelDynamoType + "=worker", scrapeOnly: true},
		{name: "nim operator", pod: testPod(map[string]string{labelManagedBy: nimOperator}, nil, "nvcr.io/nim/meta/llama3-8b-instruct:1.0", nil),
			engine: telemetry.EngineNIM, convention: labelManagedBy + "=" + nimOperator},
		{name: "app name", pod: testPod(map[string]string{labelAppName: "text-generation-inference"}, nil, "registry.local/tgi-fork:1", nil),
			engine: telemetry.EngineTGI, convention: labelAppName + "=text-generation-inference"},
		{name: "app component", pod: testPod(map[string]string{labelAppComponent: "vllm"}, nil, "registry.local/my-server:1", nil),
			engine: telemetry.EngineVLLM, convention: labelAppComponent + "=vllm"},
		{name: "image only", pod: testPod(nil, nil, "ghcr.io/ggml-org/llama.cpp:server", nil),
			engine: telemetry.EngineLlamaCpp, convention: "image ghcr.io/ggml-org/llama.cpp:server"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, ok, skip := classify(tc.pod)
			if !ok || skip != "" {
				t.Fatalf("not found (skip %q)", skip)
			}
			if m.Engine != tc.engine || m.Role != tc.role || m.Group != tc.group || m.Convention != tc.convention || m.ScrapeOnly != tc.scrapeOnly {
				t.Errorf("got %+v; want engine %q role %q group %q convention %q scrapeOnly %v", m, tc.engine, tc.role, tc.group, tc.convention, tc.scrapeOnly)
			}
		})
	}
}

func TestClassifyLeavesOthers(t *testing.T) {
	if _, ok, skip := classify(testPod(map[string]string{labelLWSName: "big", labelLWSWorker: "1"}, nil, "lmsysorg/sglang:v0.5", nil)); ok || skip == "" {
		t.Errorf("LWS worker 1: found %v, skip %q; want left alone with a reason", ok, skip)
	}
	if _, ok, _ := classify(testPod(map[string]string{labelAppName: "postgres"}, nil, "postgres:17", nil)); ok {
		t.Error("postgres found as a model server")
	}
}

func TestPorts(t *testing.T) {
	for _, tc := range []struct {
		name         string
		pod          *corev1.Pod
		engine       telemetry.Engine
		metrics, api int
		path, from   string
	}{
		{name: "annotation", pod: testPod(nil, map[string]string{annotationPort: "9100", annotationPath: "/stats"}, "", map[string]int32{"http": 8000}),
			engine: telemetry.EngineVLLM, metrics: 9100, api: 8000, path: "/stats", from: annotationPort},
		{name: "named metrics", pod: testPod(nil, nil, "", map[string]int32{"metrics": 9090, "http": 8080}),
			engine: telemetry.EngineVLLM, metrics: 9090, api: 8080, path: "/metrics", from: "port named metrics"},
		{name: "named http", pod: testPod(nil, nil, "", map[string]int32{"http": 8081}),
			engine: telemetry.EngineSGLang, metrics: 8081, api: 8081, path: "/metrics", from: "port named http"},
		{name: "engine default", pod: testPod(nil, nil, "", nil),
			engine: telemetry.EngineSGLang, metrics: 30000, api: 30000, path: "/metrics", from: "sglang's default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := metricsPort(tc.pod, tc.engine)
			if err != nil {
				t.Fatal(err)
			}
			a, err := apiPort(tc.pod, tc.engine)
			if err != nil {
				t.Fatal(err)
			}
			if m.Number != tc.metrics || m.Path != tc.path || m.From != tc.from || a.Number != tc.api {
				t.Errorf("metrics %+v, api %+v; want metrics :%d%s from %q, api :%d", m, a, tc.metrics, tc.path, tc.from, tc.api)
			}
		})
	}
	if _, err := metricsPort(testPod(nil, nil, "", nil), ""); err == nil {
		t.Error("no port and no engine: want an error")
	}
	if _, err := metricsPort(testPod(nil, map[string]string{annotationPort: "http"}, "", nil), telemetry.EngineVLLM); err == nil {
		t.Error("a named annotation port: want an error")
	}
}

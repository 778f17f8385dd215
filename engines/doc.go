// Package engines is ttftop's one alias table: for every serving engine
// (vLLM V0/V1 across renames, SGLang, TGI, llama.cpp, LMDeploy, NVIDIA NIM,
// TensorRT-LLM, Triton, NVIDIA Dynamo's frontend) it says which Prometheus
// metric carries which ttftop signal, in which unit, with which model
// label, and how to aggregate it across data-parallel engines and ranks.
//
// It is pure data plus engine detection from metric names: the direct
// scraper (sources/scrape) and a PromQL source can share it. Aliases are
// listed in preference order, newest name first; the first one present
// wins (docs/engines.md).
//
// Names are family names as the Prometheus text format exposes them:
// counters with their "_total" suffix where the engine adds one (Python
// engines, llama.cpp and Dynamo do, TGI and Triton do not), histograms by
// their base name (the "_bucket", "_sum" and "_count" series are derived by
// Alias methods).
//
// Every spec's comment names where its names come from: a real page in
// internal/fixtures/testdata/metrics, the engine's source at a commit, or
// only its documentation (docs/engines.md, "Where each name comes from").
package engines

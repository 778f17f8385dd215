package telemetry

// Unmeasurable says why no source of endpoint can ever give sig: its
// engine's source said so (Endpoint.Unmeasurable), no probe measures it on
// this endpoint, and no source has sent it. ok is false when sig may yet
// come (or the endpoint is unknown).
func (s *Store) Unmeasurable(endpoint string, sig Signal) (why string, ok bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	ep, known := s.endpoints[endpoint]
	if !known {
		return "", false
	}
	why, ok = ep.info.Unmeasurable[sig]
	if !ok || ep.probed() && ClientSignal(sig) {
		return "", false
	}
	for k := range ep.tracks {
		if k.signal == sig {
			return "", false // some source gives it after all
		}
	}
	return why, true
}

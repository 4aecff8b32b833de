package corral

// chooseSeatbelt is the macOS ladder: the seatbelt rung when sandbox-exec
// works, else nothing, and that only with FallbackWarn.
func chooseSeatbelt(h *host, n needs) (*rungPlan, error) {
	sb := h.status(LayerSeatbelt)
	if sb.Available {
		return &rungPlan{rung: RungSeatbelt}, nil
	}
	if n.fallback != FallbackWarn {
		return nil, refusal(sb, RungNone)
	}
	return &rungPlan{rung: RungNone, without: []LayerStatus{sb}}, nil
}

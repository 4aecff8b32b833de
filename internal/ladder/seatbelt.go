package ladder

// chooseSeatbelt is the macOS ladder: the seatbelt rung when sandbox-exec
// works, else nothing, and that only with FallbackWarn.
func chooseSeatbelt(h *Host, n Needs) (*Plan, error) {
	sb := h.Status(LayerSeatbelt)
	if sb.Available {
		return &Plan{Rung: RungSeatbelt}, nil
	}
	if n.Fallback != FallbackWarn {
		return nil, &Refusal{Missing: sb, Possible: RungNone}
	}
	return &Plan{Rung: RungNone, Without: []LayerStatus{sb}}, nil
}

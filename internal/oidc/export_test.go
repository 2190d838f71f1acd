package oidc

// Abandon makes s's re-check passes stop right after their last change, before they tell
// anything or give anything back, as a process killed there would.
func Abandon(s *Service) { s.abandon = true }

package integration

// roleEnv selects a helper role for a re-executed test binary.
const roleEnv = "CORRAL_TEST_ROLE"

func runRole(role string) int { return 2 }

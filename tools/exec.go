package tools

import (
	"context"
	"slices"
	"strings"

	"github.com/corralhq/corral"
)

// ExecArgs are the arguments of an exec tool call: a program and its
// arguments, run without a shell.
type ExecArgs struct {
	// Program is a name looked up on the command's PATH (the tools bin
	// directory first) or a path.
	Program string   `json:"program"`
	Args    []string `json:"args,omitempty"`
	// WorkingDir is absolute or relative to the workspace, and must lie
	// inside it; empty means the workspace.
	WorkingDir string `json:"working_dir,omitempty"`
	// Env sets variables on top of the sandbox's environment. Variables
	// that change how programs load code are refused (see IsDangerousEnv).
	Env []EnvVar `json:"env,omitempty"`
	// TimeoutSeconds of 0 means Options.DefaultTimeout.
	TimeoutSeconds int `json:"timeout_seconds,omitempty"`
}

// EnvVar is one environment variable to set.
type EnvVar struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// dangerousEnv are variables that make a program load code chosen by
// whoever sets them: a shared library, a module path or startup script, or
// interpreter options. The sandbox limits what files a command can write,
// not what a program loads from the files it can, so these stay refused.
var dangerousEnv = []string{
	"LD_PRELOAD",
	"LD_LIBRARY_PATH",
	"DYLD_INSERT_LIBRARIES",
	"DYLD_LIBRARY_PATH",
	"PYTHONPATH",
	"PYTHONSTARTUP",
	"NODE_OPTIONS",
	"RUBYOPT",
	"PERL5OPT",
	"PERL5LIB",
	"BASH_ENV",
	"ENV",
}

// IsDangerousEnv reports whether Exec refuses to set name: LD_PRELOAD,
// LD_LIBRARY_PATH, DYLD_INSERT_LIBRARIES, DYLD_LIBRARY_PATH, PYTHONPATH,
// PYTHONSTARTUP, NODE_OPTIONS, RUBYOPT, PERL5OPT, PERL5LIB, BASH_ENV and ENV.
// The comparison ignores case: refusing "ld_preload" costs nothing, and a
// case-insensitive platform would honor it.
func IsDangerousEnv(name string) bool {
	for _, d := range dangerousEnv {
		if strings.EqualFold(name, d) {
			return true
		}
	}
	return false
}

// Exec runs programs inside a sandbox without a shell. It is safe for
// concurrent use.
type Exec struct{ r *runner }

// NewExec returns an Exec that runs programs in sb, whose workspace is the
// default working directory and the boundary for WorkingDir.
func NewExec(sb *corral.Sandbox, opts Options) (*Exec, error) {
	r, err := newRunner(sb, opts)
	if err != nil {
		return nil, err
	}
	return &Exec{r: r}, nil
}

// Run runs args.Program in the sandbox. It returns an error (*ArgError,
// *EnvError, *PathError, or one wrapping a corral error such as
// corral.ErrNotFound) only when the program did not run or ctx was
// cancelled; a failing or timed-out program is reported in the output.
func (e *Exec) Run(ctx context.Context, args ExecArgs) (*ExecOutput, error) {
	if args.Program == "" {
		return nil, &ArgError{Field: "program", Reason: "empty"}
	}
	if strings.ContainsRune(args.Program, 0) {
		return nil, &ArgError{Field: "program", Reason: "contains a NUL byte"}
	}
	if slices.ContainsFunc(args.Args, func(a string) bool { return strings.ContainsRune(a, 0) }) {
		return nil, &ArgError{Field: "args", Reason: "contains a NUL byte"}
	}
	env, err := checkEnvVars(args.Env)
	if err != nil {
		return nil, err
	}
	dir, err := e.r.dir(args.WorkingDir)
	if err != nil {
		return nil, err
	}
	timeout, err := e.r.timeout(args.TimeoutSeconds)
	if err != nil {
		return nil, err
	}
	return e.r.run(ctx, invocation{
		name: args.Program, args: args.Args, dir: dir, env: env, timeout: timeout,
	})
}

// checkEnvVars validates the variables a call sets and returns them as
// KEY=VALUE strings.
func checkEnvVars(vars []EnvVar) ([]string, error) {
	env := make([]string, 0, len(vars))
	for _, v := range vars {
		switch {
		case v.Key == "" || strings.ContainsAny(v.Key, "=\x00"):
			return nil, &ArgError{Field: "env", Value: v.Key, Reason: "want a variable name without '=' or NUL"}
		case strings.ContainsRune(v.Value, 0):
			return nil, &ArgError{Field: "env", Value: v.Key, Reason: "value contains a NUL byte"}
		case IsDangerousEnv(v.Key):
			return nil, &EnvError{Name: v.Key, Err: ErrDangerousEnv}
		}
		env = append(env, v.Key+"="+v.Value)
	}
	return env, nil
}

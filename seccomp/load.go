package seccomp

// instructionSize is the size of one classic BPF instruction
// (struct sock_filter).
const instructionSize = 8

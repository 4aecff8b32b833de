package corral

// maxrssUnit is the unit of Rusage.Maxrss in bytes: kilobytes on Linux.
const maxrssUnit = 1024

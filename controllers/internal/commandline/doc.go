// Package commandline holds what the controllers' commands (fleetpolicy-hub,
// fleetpolicy-spoke, fleetpolicy-console) share in checking and acting on their
// flags: whether a bind address is loopback only (Loopback), and the CPU
// profile of a whole run (StartCPUProfile). It reads no flags itself and
// exits nothing: each command decides what to do with an answer.
package commandline

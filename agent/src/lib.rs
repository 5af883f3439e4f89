//! The Orca JVMTI agent.

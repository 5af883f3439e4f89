//! Class-file rewriter for instrumentation mode (issue 3: not built yet).

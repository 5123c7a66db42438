"""Commands beside the flow: bot check, benchmarks, generated docs."""

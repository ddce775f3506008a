"""The framework: the plugin runner and its extension points, hooks and ports, out-of-tree plugin loading,
explain's recorder and the decision CPU limit."""

"""Pure domain: records, keys, label layers, metrics, agreement. Standard library only."""

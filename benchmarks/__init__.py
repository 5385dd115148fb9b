"""The benchmark suite: the canonical operations against the gateway, the aioboto3 floor and an N+1 baseline."""

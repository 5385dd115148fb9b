"""The benchmark suite: the gateway against the aioboto3 floor and the hand-written DataLoader peer."""

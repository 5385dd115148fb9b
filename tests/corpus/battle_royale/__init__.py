"""AWS's Battle Royale game player data design: its table and items, written as the lab's scripts write them."""

"""Alex DeBrie's Instagram clone: its table and items, written as its data classes write them."""

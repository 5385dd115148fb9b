"""AWS's recurring payments schema design: its table and items, as the design writes them."""

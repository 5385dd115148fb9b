"""AWS's social network schema design: its table and items, as its schema's sample data writes them."""

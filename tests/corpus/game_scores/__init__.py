"""The DynamoDB developer guide's GameScores table: its creation and items, as the guide writes them."""

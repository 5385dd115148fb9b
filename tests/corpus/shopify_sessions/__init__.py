"""Shopify's DynamoDB session storage: its table and items, as its adapter writes them."""

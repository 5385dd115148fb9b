"""dynamo"""
